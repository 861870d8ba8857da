// The fault harness's fence audit: triggers in its database record, for every checkpoint row stored and every task
// completed, which process wrote it (its connection's application_name, one per process the harness starts) and
// which worker held the task at that moment. A write by a process that did not hold the task is a fencing failure:
// a worker that lost its lease (cut off and reaped, say) wrote anyway. The checkpoint trigger reads the task row in
// a statement of its own, so it sees the latest committed owner: a takeover that committed between the fence's check
// and the insert counts as a violation too.
import type pg from "pg";

const INSTALL = `
CREATE TABLE fence_audit (
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  what text NOT NULL,
  task_seq bigint NOT NULL,
  idx int,
  writer text NOT NULL,
  owner text,
  owner_state text
);
CREATE FUNCTION fence_audit_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fence_audit (what, task_seq, idx, writer, owner, owner_state)
  SELECT 'checkpoint', NEW.task_seq, NEW.idx, current_setting('application_name'), t.locked_by, t.state
  FROM tasks t WHERE t.seq = NEW.task_seq;
  RETURN NULL;
END $$;
CREATE TRIGGER fence_audit_checkpoint AFTER INSERT ON task_checkpoints
  FOR EACH ROW EXECUTE FUNCTION fence_audit_checkpoint();
CREATE FUNCTION fence_audit_completion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fence_audit (what, task_seq, writer, owner, owner_state)
  VALUES ('completion', OLD.seq, current_setting('application_name'), OLD.locked_by, OLD.state);
  RETURN NEW;
END $$;
CREATE TRIGGER fence_audit_completion BEFORE UPDATE ON tasks
  FOR EACH ROW WHEN (NEW.state = 'completed' AND OLD.state IS DISTINCT FROM 'completed')
  EXECUTE FUNCTION fence_audit_completion();
`;

/** Installs the audit (after the schema's migrations ran: it needs `tasks` and `task_checkpoints`). */
export async function installFenceAudit(db: pg.Client): Promise<void> {
  await db.query(INSTALL);
}

export interface FenceReport {
  checkpoint_writes: number;
  completions: number;
  /** Writes by a process that did not hold the task (owner null, another worker, or not running): must be 0. */
  unfenced: number;
  examples: string[];
}

/**
 * Reads the audit. `pidOf` maps a writer's application_name to its process id; a worker id is
 * `<host>:<pid>:<n>` (src/main.ts), so the owner's process is its middle part.
 */
export async function fenceReport(db: pg.Client, pidOf: (writer: string) => number | undefined): Promise<FenceReport> {
  const { rows } = await db.query<{
    what: string;
    task_seq: number;
    idx: number | null;
    writer: string;
    owner: string | null;
    owner_state: string | null;
  }>("SELECT what, task_seq, idx, writer, owner, owner_state FROM fence_audit ORDER BY at");
  const bad = rows.filter((r) => {
    const ownerPid = r.owner ? Number(r.owner.split(":").at(-2)) : undefined;
    return r.owner_state !== "running" || ownerPid === undefined || ownerPid !== pidOf(r.writer);
  });
  return {
    checkpoint_writes: rows.filter((r) => r.what === "checkpoint").length,
    completions: rows.filter((r) => r.what === "completion").length,
    unfenced: bad.length,
    examples: bad
      .slice(0, 5)
      .map(
        (r) =>
          `${r.what} of task ${r.task_seq}${r.idx === null ? "" : ` window ${r.idx}`} by ${r.writer}, owner ${r.owner} (${r.owner_state})`,
      ),
  };
}
