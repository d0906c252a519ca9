// Checking the log's signed tree in the page (RFC 9162, decision 0024): a head's Ed25519
// signature against the log's key, and an event's inclusion proof against a head's root, with
// the browser's own WebCrypto. Nothing here trusts the server: the leaf is recomputed from the
// event's position and chain hash.

const subtle = globalThis.crypto?.subtle;

/** Whether this page can check signatures and hashes (WebCrypto needs HTTPS or localhost). */
export const canCheck = Boolean(subtle);

export const fromHex = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));
const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const u64be = (n) => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
};
const sha256 = async (bytes) => new Uint8Array(await subtle.digest("SHA-256", bytes));

/** The leaf of the event at `position` whose chain hash is `hash` (hex): SHA-256(0x00 ‖ u64be(position) ‖ hash). */
export async function leafOf(position, hash) {
  return sha256(concat(Uint8Array.of(0), u64be(position), fromHex(hash)));
}

const node = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/** RFC 9162 §2.1.3.2: whether `leaf` is leaf `index` of the tree of `size` leaves with root `root`. */
export async function verifyInclusion(index, size, leaf, path, root) {
  if (index >= size) return false;
  let [f, s, r] = [BigInt(index), BigInt(size) - 1n, leaf];
  for (const p of path) {
    if (s === 0n) return false;
    if ((f & 1n) === 1n || f === s) {
      r = await node(p, r);
      while ((f & 1n) === 0n && f !== 0n) { f >>= 1n; s >>= 1n; }
    } else {
      r = await node(r, p);
    }
    f >>= 1n;
    s >>= 1n;
  }
  return s === 0n && toHex(r) === toHex(root);
}

/** Whether `head` (as `/v1/log/head` gives it) is signed by `key` (as `/v1/log/key` gives it). */
export async function verifyHead(head, key) {
  const tag = new TextEncoder().encode("palimpsest tree head v1\n");
  const logId = fromHex(head.log_id.replaceAll("-", ""));
  const signed = concat(tag, logId, u64be(head.tree_size), u64be(head.timestamp), fromHex(head.root_hash));
  const publicKey = await subtle.importKey("raw", fromHex(key.public_key), { name: "Ed25519" }, false, ["verify"]);
  return subtle.verify({ name: "Ed25519" }, publicKey, fromHex(head.signature), signed);
}

/** The event's inclusion in `head`'s tree, checked: `true`, `false`, or `null` (not in it yet). */
export async function included(event, head, proof) {
  if (event.position > head.tree_size) return null;
  const leaf = await leafOf(event.position, event.hash);
  const path = proof.audit_path.map(fromHex);
  return verifyInclusion(event.position - 1, head.tree_size, leaf, path, fromHex(head.root_hash));
}
