// Checks a real answer against what GET /openapi.json says that route answers: the body at that status and media
// type, validated as JSON Schema 2020-12 (the document's own dialect) by Ajv, strictly (no member the document does
// not name). The document is built from the route modules' zod schemas (src/api/route.ts), so this is also the
// check that those schemas describe what the handlers really send.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument } from "../../src/api/openapiDocument.js";

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> } | undefined>;
}
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const doc = openApiDocument({ metrics: true, speakers: true }) as unknown as {
  paths: Record<string, Record<string, Operation | undefined> | undefined>;
  components: unknown;
};
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
// One schema holding the components, so that `#/components/schemas/X` resolves in every compiled body schema.
ajv.addSchema({ $id: "sori:openapi", components: doc.components });
const compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();

/** `route` as "GET /v1/transcribe/{id}"; throws with Ajv's findings when the body is not what the document says. */
export function assertDocumented(route: string, status: number, body: unknown, mediaType = "application/json"): void {
  const [method, path] = route.split(" ") as [string, string];
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${route} is not in the OpenAPI document`);
  const schema = op.responses[String(status)]?.content?.[mediaType]?.schema;
  if (!schema) throw new Error(`${route} documents no ${mediaType} answer with status ${status}`);
  const key = `${route} ${status} ${mediaType}`;
  let validate = compiled.get(key);
  if (!validate) {
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"sori:openapi#/components/'));
    validate = ajv.compile(rebased);
    compiled.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${key}: the body does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
