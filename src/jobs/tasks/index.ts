// The task function of each kind: the worker looks the claimed task's kind up here and knows nothing else.
import type { TaskKind } from "../../storage/schema.js";
import { refineTask } from "./refine.js";
import { transcribeTask } from "./transcribe.js";
import type { TaskDefinition, TaskDeps } from "./types.js";

export type { TaskContext, TaskDefinition, TaskDeps } from "./types.js";

export function taskDefinitions(deps: TaskDeps): Record<TaskKind, TaskDefinition> {
  return { transcribe: transcribeTask(deps), refine: refineTask(deps) };
}
