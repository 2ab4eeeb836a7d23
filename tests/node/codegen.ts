// graphql-codegen: TypeScript types and typed documents for the operations
// in operations.graphql, from the server's exported schema (make schema;
// MMK_SCHEMA names another file).
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: process.env.MMK_SCHEMA ?? "../../schema.graphql",
  documents: "operations.graphql",
  generates: {
    // Every type of the schema, as a client's model would use them.
    "generated/schema.ts": {
      plugins: ["typescript"],
      config: { enumsAsTypes: true, strictScalars: true, scalars: { DateTime: "string", JSON: "unknown" } },
    },
    // The operations the clients send, with their results' types.
    "generated/graphql.ts": {
      plugins: ["typescript-operations", "typed-document-node"],
      config: {
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: "string", JSON: "unknown" },
        useTypeImports: true,
      },
    },
  },
};
export default config;
