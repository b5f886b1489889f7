import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

// A real SMTP server in the test process (the smtp-server package), on a loopback port.

export interface ReceivedMail {
  from: string;
  /** Envelope recipients. */
  to: string[];
  subject: string;
  /** The text body, decoded. */
  body: string;
}

export interface TestSmtpServer {
  url: string;
  /** Every message delivered so far, in order. */
  received: ReceivedMail[];
  /** Resolves with the first delivered message that matches, as soon as it has arrived. */
  delivered(match: (m: ReceivedMail) => boolean): Promise<ReceivedMail>;
  /** MAIL FROM commands seen (deliveries tried), counting refused ones. */
  attempts(): number;
  /** Resolves once `n` deliveries have been tried. */
  attempted(n: number): Promise<void>;
  close(): Promise<void>;
}

const decodeQuotedPrintable = (text: string) =>
  Buffer.from(
    text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1",
  ).toString("utf8");

function parseMessage(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const headers = new Map(head.split("\r\n").map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  const rawBody = raw.slice(split + 4);
  const encoding = headers.get("content-transfer-encoding")?.toLowerCase();
  const body = encoding === "quoted-printable" ? decodeQuotedPrintable(rawBody) : encoding === "base64" ? Buffer.from(rawBody, "base64").toString("utf8") : rawBody;
  return { from, to, subject: headers.get("subject") ?? "", body: body.replace(/\r\n/g, "\n") };
}

/** Starts an SMTP server that accepts every message, or (`refuse`) answers every MAIL FROM with 550. */
export async function startSmtpServer(opts: { refuse?: boolean } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters: Array<{ match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }> = [];
  const attemptWaiters: Array<{ n: number; resolve: () => void }> = [];
  let attempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onMailFrom(_address, _session, callback) {
      attempts++;
      for (const w of attemptWaiters.filter((w) => w.n <= attempts)) w.resolve();
      if (!opts.refuse) return callback();
      callback(Object.assign(new Error("mailbox unavailable"), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const envelope = session.envelope;
        const mail = parseMessage(
          Buffer.concat(chunks).toString("latin1"),
          envelope.mailFrom ? envelope.mailFrom.address : "",
          envelope.rcptTo.map((r) => r.address),
        );
        received.push(mail);
        for (const w of waiters.filter((w) => w.match(mail))) w.resolve(mail);
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    delivered: (match) => {
      const found = received.find(match);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
    },
    attempts: () => attempts,
    attempted: (n) => (attempts >= n ? Promise.resolve() : new Promise((resolve) => attemptWaiters.push({ n, resolve }))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
