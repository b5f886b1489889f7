export function loadTemplate<T>(templatePath: string, make: () => Promise<Uint8Array>, load: (template: Uint8Array) => Promise<T>): Promise<T>;
