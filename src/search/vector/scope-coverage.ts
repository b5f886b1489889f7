import type { Data, Vector } from "apache-arrow";

/** Where a search may find rows: a workspace and, when given, any of its containers. */
export interface SearchScope {
  workspaceId: string;
  containers?: readonly string[];
}

/**
 * A row's scope: its workspace and containers. Rows share one too: their workspace and the containers
 * every one of them is in; every row is in a search's scope when what they share is.
 */
export interface RowScope {
  workspaceId: string;
  containers: readonly string[];
}

/** Whether a row (or every row sharing `row`) is in `scope`. */
export const inScope = (row: RowScope, scope: SearchScope): boolean =>
  row.workspaceId === scope.workspaceId && (scope.containers === undefined || row.containers.some((c) => scope.containers!.includes(c)));

/** UTF-8 strings: string i is bytes [ends[i], ends[i + 1]) of `bytes`. */
interface Strings {
  ends: ArrayLike<number | bigint>;
  bytes: Uint8Array;
}

const stringsOf = (data: Data): Strings => ({ ends: data.valueOffsets as ArrayLike<number | bigint>, bytes: data.values as Uint8Array });

const bytesOf = (s: Strings, i: number): Uint8Array => s.bytes.slice(Number(s.ends[i]), Number(s.ends[i + 1]));

function sameBytes(s: Strings, i: number, value: Uint8Array): boolean {
  const start = Number(s.ends[i]);
  if (Number(s.ends[i + 1]) - start !== value.length) return false;
  for (let b = 0; b < value.length; b++) if (s.bytes[start + b] !== value[b]) return false;
  return true;
}

/**
 * Finds the scope rows read in batches have in common: their one workspace (none once rows of two were
 * read) and the containers every row is in. Reads the raw column buffers, without a string or an object
 * a row, as it runs beside every fill of the row cache.
 */
export function commonScopeReader() {
  let rows = 0;
  let workspace: Uint8Array | null = null;
  let containers: Uint8Array[] = [];

  return {
    /** Adds a batch's `workspace_id` (utf8) and `containers` (list of utf8) columns. */
    add(workspaceColumn: Vector, containersColumn: Vector, numRows: number): void {
      if (numRows === 0 || (rows > 0 && workspace === null)) return;
      const workspaces = stringsOf(workspaceColumn.data[0]!);
      const lists = containersColumn.data[0]!;
      const listEnds = lists.valueOffsets as Int32Array;
      const names = stringsOf(lists.children[0]!);
      let from = 0;
      if (rows === 0) {
        workspace = bytesOf(workspaces, 0);
        for (let j = listEnds[0]!; j < listEnds[1]!; j++) containers.push(bytesOf(names, j));
        from = 1;
      }
      rows += numRows;
      for (let i = from; i < numRows; i++) {
        if (!sameBytes(workspaces, i, workspace!)) {
          workspace = null;
          return;
        }
        if (containers.length === 0) continue;
        containers = containers.filter((name) => {
          for (let j = listEnds[i]!; j < listEnds[i + 1]!; j++) if (sameBytes(names, j, name)) return true;
          return false;
        });
      }
    },

    /** The scope of every row read; null before the first row or once they differ in workspace. */
    common(): RowScope | null {
      if (workspace === null) return null;
      const text = new TextDecoder();
      return { workspaceId: text.decode(workspace), containers: containers.map((c) => text.decode(c)) };
    },
  };
}
