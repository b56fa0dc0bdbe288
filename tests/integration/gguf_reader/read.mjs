// Reads GGUF files with @huggingface/gguf (an independent implementation)
// and prints, per file, one JSON line: version, metadata (key -> value;
// bigints as strings, strings as they are) and tensor infos (name, shape in
// GGUF order, ggml type id, offset relative to the data section), and the
// data section's offset. Usage: node read.mjs FILE...
import { gguf } from "@huggingface/gguf";

const plain = (v) => {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(plain);
  return v;
};

for (const path of process.argv.slice(2)) {
  const { metadata, tensorInfos, tensorDataOffset } = await gguf(path, { allowLocalFile: true });
  const meta = {};
  for (const [k, v] of Object.entries(metadata)) meta[k] = plain(v);
  const tensors = tensorInfos.map((t) => ({
    name: t.name,
    shape: t.shape.map((d) => d.toString()),
    dtype: t.dtype,
    offset: t.offset.toString(),
  }));
  console.log(JSON.stringify({ path, metadata: meta, tensors, data: tensorDataOffset.toString() }));
}
