// graphql-codegen: one file, generated/graphql.ts, with the types of the
// operations in operations.graphql and a typed document for each.
//
// typescript-operations 6.x writes the enums and input types the operations
// use by itself: adding the `typescript` plugin to the same file declares
// them twice (tsc --strict: TS2567, TS2300). strictScalars makes every
// custom scalar need a mapping (without one, DateTime comes out `unknown`).
// docs/codegen.md explains each choice.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  // The exported schema (make schema), another file or a server's URL.
  schema: process.env.MMK_SCHEMA ?? "../../schema.graphql",
  documents: "operations.graphql",
  generates: {
    "generated/graphql.ts": {
      plugins: ["typescript-operations", "typed-document-node"],
      config: {
        strictScalars: true,
        // DateTime: ISO 8601 text in UTC with milliseconds, e.g. 2026-12-06T18:04:11.412Z.
        scalars: { DateTime: "string", JSON: "unknown" },
        useTypeImports: true,
      },
    },
  },
};
export default config;
