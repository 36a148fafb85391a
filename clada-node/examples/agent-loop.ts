import { apply, prompt } from "clada";

type Message = { role: "system" | "user" | "assistant"; content: string };

export async function runAgent(model: (m: Message[]) => Promise<string>, request: string, root: string, rounds = 3) {
  const messages: Message[] = [{ role: "system", content: prompt() }, { role: "user", content: request }];
  for (let round = 0; round < rounds; round++) {
    const reply = await model(messages); // your model: the messages in, the reply's text out
    const report = await apply(reply, root, { atomic: "unit" });
    if (report.ok) return true;
    const why = report.blocks.flatMap((b) => b.tasks).filter((t) => t.status === "failed")
      .map((t) => `task ${t.number}: ${t.error?.message} (${t.error?.hint ?? "see the file"})`);
    const r = report.resend ?? { applied: [], skipped: [] };
    messages.push({ role: "assistant", content: reply }, { role: "user", content: `Applied, never send again: tasks ${r.applied}. `
      + `Failed, fix and send again: ${why.join("; ")}. Not applied, send again as written: tasks ${r.skipped}.` });
  }
  return false;
}
