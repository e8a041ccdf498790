// Prints, for every zod schema of the SDK's NES module (a frozen snapshot
// of schema-v1.25.0 that the SDK ships instead of a JSON schema), its zod
// type and, for an object, its property names and the required ones.
// interop/TestFrozenDefsMatchTheSDK compares them with the 1.21.0
// definitions the generator still reads (internal/schemagen/frozen.json).
const mod = await import(new URL("./node_modules/@agentclientprotocol/sdk/dist/nes/schema/zod.gen.js", import.meta.url));
const out = {};
for (const [name, v] of Object.entries(mod)) {
  if (!name.startsWith("z") || !v?._zod) continue;
  const shape = v.shape;
  out[name.slice(1)] = {
    type: v._zod.def.type,
    keys: shape ? Object.keys(shape).sort() : null,
    required: shape ? Object.keys(shape).filter((k) => shape[k]._zod.optin !== "optional").sort() : null,
  };
}
process.stdout.write(JSON.stringify(out));
