// How the console writes times.

/** A time as UTC, to the millisecond. */
export const when = (text) => (text ? new Date(text).toISOString().replace("T", " ").replace("Z", " UTC") : "");
