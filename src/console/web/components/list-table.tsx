import type { ComponentChildren } from "preact";

/** A list's table: scrolls sideways on narrow screens, one header cell per column; children are its rows. */
export function ListTable({ label, columns, children }: { label: string; columns: string[]; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table class="list" aria-label={label}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col">{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
