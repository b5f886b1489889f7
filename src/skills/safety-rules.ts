// The offline safety scan's rules (docs/explanation/skill-safety-scan.md). Each looks at one line at a
// time. Every quantifier is bounded, so a pattern costs at most a few hundred steps per starting position
// and a line is scanned in time linear in its length; a cheap `gate` skips most lines before any regex.

export type Severity = "critical" | "warning" | "info";

export interface LineRule {
  name: string;
  severity: Severity;
  message: string;
  /** Lowercased substrings of which the line must hold at least one before the patterns run. */
  gate?: readonly string[];
  patterns: readonly RegExp[];
  /** A match is dropped when this is true of the matched text (documented placeholders). */
  ignore?: (match: string) => boolean;
}

const fetchers = String.raw`(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)`;
const shells = String.raw`(?:sudo\s{1,8}(?:-\S{1,12}\s{1,8}){0,3})?(?:ba|z|da|k|fi)?sh|python[0-9.]{0,4}|node|perl|ruby|php|pwsh|powershell`;
const secretFiles = String.raw`(?:\.ssh/(?:id_[a-z0-9]{2,12}\b(?!\.pub)|identity\b|authorized_keys)|\.ssh/?(?=[\s"'\x60)*]|$)|\.aws/credentials|\.aws/config|\.gnupg|\.netrc|\.docker/config\.json|\.config/gcloud|\.git-credentials|\.npmrc|\.pypirc)`;
const home = String.raw`(?:~|\$home|\$\{home\}|%userprofile%|/root|/home/[a-z0-9_-]{1,32}|/users/[a-z0-9_-]{1,32})`;
const senders = String.raw`(?:curl|wget|nc|ncat|netcat|scp|rsync|requests\.(?:post|put|get)|urlopen|fetch\s{0,4}\(|axios|http\.request|invoke-webrequest|invoke-restmethod|iwr|irm|socket\.)`;
const injectionVerbs = String.raw`(?:ignore|disregard|forget|override|bypass)`;

export const lineRules: readonly LineRule[] = [
  {
    name: "download-and-execute",
    severity: "critical",
    message: "downloads code and runs it without showing it first",
    gate: ["curl", "wget", "fetch", "iwr", "irm", "invoke-", "downloadstring", "urlopen", "requests.get", "http"],
    patterns: [
      new RegExp(String.raw`\b${fetchers}\b[^\n|;]{0,200}\|\s{0,8}(?:${shells})\b`, "i"),
      new RegExp(String.raw`\b(?:${shells}|source|\.)\s{1,8}(?:-c\s{1,8})?["']?(?:<\(|\$\(|\x60)\s{0,4}${fetchers}\b`, "i"),
      new RegExp(String.raw`\b(?:iex|invoke-expression)\b[^\n]{0,200}\b(?:${fetchers}|downloadstring|net\.webclient)\b`, "i"),
      new RegExp(String.raw`\b(?:${fetchers}|downloadstring)\b[^\n]{0,200}\|\s{0,8}(?:iex|invoke-expression)\b`, "i"),
      new RegExp(String.raw`\beval\s{0,8}["'(]{0,2}\s{0,4}(?:\$\(|\x60)\s{0,4}${fetchers}\b`, "i"),
      new RegExp(String.raw`\b(?:eval|exec)\s{0,4}\(\s{0,4}(?:await\s{1,4})?\(?\s{0,4}(?:await\s{1,4})?(?:fetch|requests\.get|urllib\.request\.urlopen|urlopen|http\.get|axios\.get)\s{0,4}\(`, "i"),
      /\bhttps?:\/\/[^\s"'|]{1,300}\.(?:sh|ps1)\b[^\n]{0,200}\|\s{0,8}(?:sudo\s{1,8})?(?:ba|z)?sh\b/i,
    ],
  },
  {
    name: "decode-and-execute",
    severity: "critical",
    message: "decodes a hidden payload and runs it",
    gate: ["base64", "atob", "b64decode", "buffer.from", "xxd", "frombase64string"],
    patterns: [
      new RegExp(String.raw`\b(?:base64\s{1,8}(?:-d|--decode|-D)|xxd\s{1,8}-r(?:\s{1,8}-p)?)\b[^\n]{0,200}\|\s{0,8}(?:${shells})\b`, "i"),
      /\b(?:eval|exec|function)\s{0,4}\(\s{0,4}(?:atob|base64\.b64decode|b64decode|buffer\.from|codecs\.decode)\s{0,4}\(/i,
      /\b(?:iex|invoke-expression)\b[^\n]{0,200}frombase64string/i,
      /frombase64string[^\n]{0,300}\|\s{0,8}(?:iex|invoke-expression)\b/i,
    ],
  },
  {
    name: "credential-access",
    severity: "critical",
    message: "reads SSH keys, cloud credentials or browser profiles",
    gate: [".ssh", ".aws", ".gnupg", ".netrc", ".docker", "gcloud", "git-credentials", ".npmrc", ".pypirc", "login data", "cookies", "firefox", "chrome", "keychain", "local state"],
    patterns: [
      new RegExp(String.raw`\b(?:cat|type|less|more|head|tail|cp|copy|scp|tar|zip|base64|gc|get-content|readfile(?:sync)?|open)\b[^\n]{0,200}${home}[/\\]${secretFiles}`, "i"),
      new RegExp(String.raw`${home}[/\\]${secretFiles}[^\n]{0,200}\b${senders}`, "i"),
      new RegExp(String.raw`\b${senders}[^\n]{0,200}@?${home}[/\\]${secretFiles}`, "i"),
      /(?:google[/\\ ]chrome|chromium|brave-browser|microsoft[/\\ ]edge)[/\\][^\n]{0,80}(?:login data|cookies|local state|web data)/i,
      /\.mozilla[/\\]firefox[/\\][^\n]{0,80}(?:logins\.json|key4\.db|cookies\.sqlite)/i,
      /\bsecurity\s{1,8}(?:find-generic-password|find-internet-password|dump-keychain)\b/i,
    ],
  },
  {
    name: "environment-exfiltration",
    severity: "critical",
    message: "sends environment variables (where keys live) over the network",
    gate: ["env", "environ"],
    patterns: [
      new RegExp(String.raw`\b(?:env|printenv|set|export\s{1,4}-p|get-childitem\s{1,4}env:|gci\s{1,4}env:)\s{0,4}\|[^\n]{0,200}\b${senders}`, "i"),
      new RegExp(String.raw`(?:os\.environ|process\.env|\$env:|environment\.getenvironmentvariables)\b[^\n]{0,200}\b${senders}`, "i"),
      new RegExp(String.raw`\b${senders}[^\n]{0,200}(?:os\.environ\b(?!\.get|\[)|json\.stringify\(process\.env\)|\$\(env\)|\$\(printenv\))`, "i"),
    ],
  },
  {
    name: "exfiltration-endpoint",
    severity: "critical",
    message: "sends data to a hard-coded webhook or request collector",
    gate: ["webhook", "hooks.slack", "requestbin", "pipedream", "ngrok", "burpcollaborator", "interact.sh", "oast", "pastebin", "telegram", "canarytokens"],
    patterns: [
      /discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}/i,
      /hooks\.slack\.com\/services\/[A-Z0-9]{5,20}\//i,
      /\b(?:webhook\.site|requestbin\.(?:net|com)|[a-z0-9-]{1,63}\.pipedream\.net|[a-z0-9-]{1,63}\.ngrok(?:-free)?\.(?:io|app)|[a-z0-9.-]{1,100}\.burpcollaborator\.net|[a-z0-9.-]{1,100}\.(?:interact\.sh|oast\.(?:fun|me|live|site|online|pro))|pastebin\.com\/api|canarytokens\.com)\b/i,
      /api\.telegram\.org\/bot[0-9]{5,15}:/i,
    ],
  },
  {
    name: "instruction-override",
    severity: "critical",
    message: "tells the agent to ignore its user or system prompt, or to hide what it does",
    gate: ["ignore", "disregard", "forget", "override", "bypass", "user", "system prompt", "reveal", "secret", "developer mode", "jailbreak", "hide", "conceal"],
    patterns: [
      new RegExp(String.raw`\b${injectionVerbs}\s{1,4}(?:all\s{1,4}|any\s{1,4})?(?:of\s{1,4})?(?:the\s{1,4}|your\s{1,4}|my\s{1,4})?(?:previous|prior|above|earlier|preceding|original|other|system|safety)\s{1,4}(?:instructions|prompts?|rules|guidelines|messages|directions)\b`, "i"),
      new RegExp(String.raw`\b${injectionVerbs}\s{1,4}(?:the\s{1,4}|your\s{1,4})?(?:system\s{1,4}prompt|user'?s?\s{1,4}(?:instructions|requests?|wishes))\b`, "i"),
      /\b(?:do\s{1,4}not|don'?t|never)\s{1,4}(?:tell|inform|notify|alert|mention\s{1,4}(?:this\s{1,4})?to|reveal\s{1,4}(?:this\s{1,4})?to|show|let)\s{1,4}the\s{1,4}user\b(?!\s{1,4}(?:wait|waiting|guess|guessing))/i,
      /\bwithout\s{1,4}(?:telling|informing|notifying|alerting)\s{1,4}the\s{1,4}user\b/i,
      /\b(?:hide|conceal)\s{1,4}(?:this|these|the|your|all)\s{1,4}(?:actions?|commands?|steps?|requests?|activity|changes)\s{1,4}from\s{1,4}the\s{1,4}user\b/i,
      /\b(?:you\s{1,4}are\s{1,4}now|enter|enable)\s{1,4}(?:in\s{1,4})?(?:developer|dan|jailbreak|god)\s{1,4}mode\b/i,
      /\bthe\s{1,4}user\s{1,4}must\s{1,4}not\s{1,4}(?:know|see|find\s{1,4}out)\b/i,
    ],
  },
  {
    name: "embedded-private-key",
    severity: "critical",
    message: "bundles a private key",
    gate: ["private key"],
    patterns: [/-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/],
  },
  {
    name: "embedded-api-key",
    severity: "critical",
    message: "bundles what looks like a live API key or token",
    patterns: [
      /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/,
      /\bgh[pousr]_[A-Za-z0-9]{36}\b/,
      /\bgithub_pat_[A-Za-z0-9_]{60,90}\b/,
      /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,200}\b/,
      /\bxox[abposr]-[0-9A-Za-z-]{20,100}\b/,
      /\bAIza[0-9A-Za-z_-]{35}\b/,
      /\b(?:sk|rk)_live_[0-9A-Za-z]{20,100}\b/,
      /\bglpat-[0-9A-Za-z_-]{20}\b/,
    ],
    // Documentation's sample keys (AKIAIOSFODNN7EXAMPLE) and obvious fillers are not secrets.
    ignore: (m) => /example|x{6}|0{8}|1234567|abcdef/i.test(m),
  },
  {
    name: "encoded-blob",
    severity: "warning",
    message: "holds a long base64 or hex run that a reader cannot check",
    patterns: [/[A-Za-z0-9+/]{240,}={0,2}/, /(?:[0-9a-fA-F]{2}){128,}/, /(?:\\x[0-9a-fA-F]{2}){48,}/],
  },
  {
    name: "credential-path",
    severity: "warning",
    message: "names a credential file or directory",
    gate: [".ssh", ".aws", ".kube", ".env", "credentials", ".netrc"],
    patterns: [new RegExp(String.raw`${home}[/\\](?:\.ssh|\.aws|\.kube/config|\.netrc)\b`, "i"), /(?:^|[\s"'=(])\.env(?:\.[a-z]{1,12})?\b[^\n]{0,100}\b(?:curl|wget|nc|requests\.post|fetch\s{0,4}\()/i],
  },
  {
    name: "remote-script",
    severity: "info",
    message: "downloads a script to run later; check what it is",
    gate: [".sh", ".ps1", ".py"],
    patterns: [new RegExp(String.raw`\b${fetchers}\b[^\n]{0,160}https?://[^\s"']{1,300}\.(?:sh|ps1|py)\b`, "i")],
  },
];
