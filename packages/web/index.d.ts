/** Absolute path of the built inbox assets (`dist/`), served by the relay at `/` (`staticDir`). */
export declare const webRoot: string;
