import { useState } from "preact/hooks";

/** A destructive action asks once more, in place (keyboard-usable, no browser dialog). */
export function ConfirmButton(p: { label: string; confirm: string; onConfirm(): void; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={p.disabled} onClick={() => setAsking(true)}>
        {p.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={p.confirm}>
      <span>{p.confirm}</span>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          p.onConfirm();
        }}
      >
        Yes, {p.label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
