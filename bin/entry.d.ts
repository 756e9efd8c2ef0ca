export declare const bundleInputs: ReadonlyArray<string>
export declare const stampName: string
export declare const sourceSignature: (
  root: string,
  inputs?: ReadonlyArray<string>
) => { readonly files: number; readonly signature: string }
export declare const isFresh: (root: string, distDir?: string) => boolean
export declare const chooseEntry: (root: string, env: Readonly<Record<string, string | undefined>>) => string
