// How the console writes times.

/** A time as UTC, to the millisecond; a text that is not a time, as it is. */
export const when = (text) => {
  if (!text) return "";
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? String(text) : date.toISOString().replace("T", " ").replace("Z", " UTC");
};
