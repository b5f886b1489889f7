/** A new key's secret: shown once, here, until dismissed; the server keeps only its hash. */
export function SecretOnce({ title, secret, onDone }: { title: string; secret: string; onDone(): void }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{title}</strong> Copy the secret now: it is shown only once.
      </p>
      <input type="text" readOnly value={secret} aria-label="New key secret" onFocus={(e) => e.currentTarget.select()} />
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}
