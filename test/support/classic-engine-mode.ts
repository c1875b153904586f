// Jest project "classic": the local engine omits fn_id, so the SDK runs one step per call.
// eslint-disable-next-line no-restricted-properties -- read by test/support/env.ts
process.env.LOCAL_ENGINE_CHECKPOINTING = "false";
