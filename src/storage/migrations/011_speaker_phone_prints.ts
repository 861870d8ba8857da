import type { Kysely } from "kysely";

// A known speaker's phone print (docs/speakers.md, "Phone calls"): its enrollment speech as a phone line passes it,
// a JSON array like `embedding`; jobs heard on the phone are named against it. Null for speakers enrolled before it
// existed: those jobs compare the wideband print, as before.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("speakers").addColumn("embedding_phone", "text").execute();
}
