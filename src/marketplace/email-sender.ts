import type { FastifyBaseLogger } from "fastify";
import { createTransport } from "nodemailer";
import type { Database } from "../db/database.js";
import { claimDueEmails, markAttemptFailed, markSent, msUntilNextDue } from "./email-outbox.js";
import { emailBackoffMs } from "./marketplace-rules.js";

export interface EmailSenderOptions {
  smtpUrl: string;
  from: string;
  maxAttempts: number;
  retryBaseMs: number;
}

const batchSize = 10;
/** Emails queued by other nodes are picked up at least this often. */
const idlePollMs = 30_000;
/** One attempt's hold on an email: longer than the transport's timeouts together. */
const attemptLeaseMs = 120_000;
const smtpTimeoutMs = 20_000;
/** Shutdown waits this long for an attempt under way; one cut off is retried when its lease ends. */
const stopGraceMs = 2_000;

/**
 * Delivers the outbox over SMTP in the background. `kick()` starts a pass at once (after an action);
 * otherwise it wakes when the next email is due, or every 30 s. An attempt that fails is retried after a
 * backoff that doubles from EMAIL_RETRY_BASE_MS; after EMAIL_MAX_ATTEMPTS the email is marked failed.
 */
export function createEmailSender(db: Database, opts: EmailSenderOptions, log: FastifyBaseLogger) {
  const transport = createTransport({
    url: opts.smtpUrl,
    connectionTimeout: smtpTimeoutMs,
    greetingTimeout: smtpTimeoutMs,
    socketTimeout: smtpTimeoutMs,
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function attempt(): Promise<number> {
    const due = await claimDueEmails(db, batchSize, attemptLeaseMs);
    for (const email of due) {
      try {
        await transport.sendMail({ from: opts.from, to: email.to, subject: email.subject, text: email.body });
        await markSent(db, email.id);
      } catch (err) {
        const retry = email.attempts >= opts.maxAttempts ? null : emailBackoffMs(email.attempts, opts.retryBaseMs);
        log.warn({ err, emailId: email.id, attempt: email.attempts, retryInMs: retry }, "sending an author email failed");
        await markAttemptFailed(db, email.id, (err as Error).message ?? String(err), retry);
      }
    }
    return due.length;
  }

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(kick, Math.min(Math.max(ms, 0), idlePollMs));
    timer.unref();
  }

  async function pass(): Promise<void> {
    do {
      again = false;
      let claimed = batchSize;
      // A full batch may mean more are due.
      while (!stopped && claimed === batchSize) claimed = await attempt();
    } while (again && !stopped);
    schedule((await msUntilNextDue(db)) ?? idlePollMs);
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => {
        log.error({ err }, "the email outbox could not be read; retried later");
        schedule(idlePollMs);
      })
      .finally(() => {
        running = undefined;
      });
  }

  return {
    kick,
    start: kick,
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise((resolve) => (grace = setTimeout(resolve, stopGraceMs)))]);
      clearTimeout(grace);
      transport.close();
    },
  };
}

export type EmailSender = ReturnType<typeof createEmailSender>;
