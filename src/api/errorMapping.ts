// Any error a request handler throws, as the spec's error: ours as they are, the domain's and the framework's
// (bad content type, body too large, malformed JSON...) as the client's H0001 or H0005, anything else E500.
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { InvalidInput, UnsupportedAudio } from "../domain/errors.js";
import { ApiError, isApiError } from "../errors.js";

export function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  // A request that a route's schemas refuse (route.ts): the first problem, in the words its schema gives, which
  // name the field.
  if (hasZodFastifySchemaValidationErrors(err)) return new ApiError("H0001", err.validation[0]!.message);
  if (err instanceof InvalidInput) return new ApiError("H0001", err.message);
  if (err instanceof UnsupportedAudio) return new ApiError("H0010", err.message);
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.code === "FST_REQ_FILE_TOO_LARGE") return new ApiError("H0005");
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") return new ApiError("H0001", "request body too large");
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError("H0001", e.message ?? "invalid request");
  }
  return new ApiError("E500", "internal server error");
}
