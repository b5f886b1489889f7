import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import type { Option } from "../format.js";

// Form controls, each named by its label for assistive technology (and tests); hints describe, they do not name.

interface TextProps {
  label: string;
  value: string;
  onInput(value: string): void;
  type?: "text" | "password" | "number" | "email" | "datetime-local" | "search";
  placeholder?: string;
  required?: boolean;
  hint?: string;
  step?: string;
  autoComplete?: string;
}

/** A labelled control with an optional hint, which describes the control without becoming part of its name. */
function Field(p: { label: string; hint: string | undefined; wide?: boolean; control(id: string, describedBy: string | undefined): preact.JSX.Element }) {
  const id = useId();
  const hintId = p.hint ? `${id}-hint` : undefined;
  return (
    <div class={p.wide ? "field wide" : "field"}>
      <label for={id}>{p.label}</label>
      {p.control(id, hintId)}
      {p.hint && (
        <small id={hintId} class="muted">
          {p.hint}
        </small>
      )}
    </div>
  );
}

export function TextField(p: TextProps) {
  return (
    <Field
      label={p.label}
      hint={p.hint}
      control={(id, describedBy) => (
        <input
          id={id}
          aria-describedby={describedBy}
          // Preact's types tie each input type to its ARIA roles; all of these are plain text boxes.
          type={(p.type ?? "text") as "text"}
          value={p.value}
          placeholder={p.placeholder}
          required={p.required}
          step={p.step}
          autocomplete={p.autoComplete ?? "off"}
          spellcheck={false}
          onInput={(e) => p.onInput(e.currentTarget.value)}
        />
      )}
    />
  );
}

export function TextArea(p: { label: string; value: string; onInput(value: string): void; rows?: number; required?: boolean; hint?: string; placeholder?: string }) {
  return (
    <Field
      label={p.label}
      hint={p.hint}
      wide
      control={(id, describedBy) => (
        <textarea
          id={id}
          aria-describedby={describedBy}
          rows={p.rows ?? 3}
          value={p.value}
          required={p.required}
          placeholder={p.placeholder}
          onInput={(e) => p.onInput(e.currentTarget.value)}
        />
      )}
    />
  );
}

export function Select(p: { label: string; value: string; options: Array<{ value: string; label: string }>; onChange(value: string): void }) {
  return (
    <Field
      label={p.label}
      hint={undefined}
      control={(id) => (
        <select id={id} value={p.value} onChange={(e) => p.onChange(e.currentTarget.value)}>
          {p.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/** A select over an enum's options, with an entry for "none" (value 0, UNSPECIFIED). */
export function EnumSelect(p: { label: string; value: number; options: Option[]; none: string; onChange(value: number): void }) {
  return (
    <Select
      label={p.label}
      value={String(p.value)}
      options={[{ value: "0", label: p.none }, ...p.options.map((o) => ({ value: String(o.value), label: o.label }))]}
      onChange={(v) => p.onChange(Number(v))}
    />
  );
}

export function Checkbox(p: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={p.checked} onChange={(e) => p.onChange(e.currentTarget.checked)} />
      {p.label}
    </label>
  );
}

/** Any of an enum's values, as a group of checkboxes. */
export function EnumChecks(p: { legend: string; options: Option[]; value: number[]; onChange(value: number[]): void }) {
  return (
    <fieldset class="checks">
      <legend>{p.legend}</legend>
      {p.options.map((o) => (
        <Checkbox
          key={o.value}
          label={o.label}
          checked={p.value.includes(o.value)}
          onChange={(on) => p.onChange(on ? [...p.value, o.value] : p.value.filter((v) => v !== o.value))}
        />
      ))}
    </fieldset>
  );
}

export function Form(p: { label: string; onSubmit(): void; children: ComponentChildren; class?: string }) {
  return (
    <form
      class={`form ${p.class ?? ""}`}
      aria-label={p.label}
      onSubmit={(e) => {
        e.preventDefault();
        p.onSubmit();
      }}
    >
      {p.children}
    </form>
  );
}
