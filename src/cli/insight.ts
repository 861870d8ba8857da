// `sori insight prepare`: gets the embedded insight model's evaluated shared prompt onto disk (SORI_INSIGHT_STATE_DIR),
// so that every worker start, the first included, reads it back in about a second instead of evaluating it (about
// 45 s of one core for the default model). `make install` runs it once after assembling the model.
import fs from "node:fs";
import { Command } from "commander";
import { loadConfig } from "../config.js";
import { insightBackend, sharedPrompts } from "../insight/index.js";

export function insightCommand(): Command {
  const cmd = new Command("insight").description("the embedded insight model (Enterprise add-on)");
  cmd
    .command("prepare")
    .description("load the insight model and keep its evaluated shared prompt in SORI_INSIGHT_STATE_DIR")
    .action(async () => {
      const config = loadConfig();
      if (config.insight.baseUrl) {
        process.stdout.write("an OpenAI-compatible insight endpoint is configured: nothing to prepare\n");
        return;
      }
      const llm = insightBackend(config, (msg, fields) =>
        process.stdout.write(`${msg}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`),
      );
      llm.prepare?.(sharedPrompts());
      await llm.ready?.();
      await llm.close();
      const kept = fs.existsSync(config.insight.stateDir) ? fs.readdirSync(config.insight.stateDir) : [];
      if (!kept.some((f) => f.startsWith("item-"))) {
        throw new Error(`no evaluated prompt was written to ${config.insight.stateDir}`);
      }
    });
  return cmd;
}
