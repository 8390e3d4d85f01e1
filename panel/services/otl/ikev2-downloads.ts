// What the one-time-link page needs from IKEv2: the CA certificate and an account's profile, or null when not offered.

/** A file the page offers for download. */
export interface OtlDownload {
  /** File name the browser saves it as. */
  filename: string;
  /** Content-Type header value. */
  contentType: string;
  body: string | Buffer;
}

/**
 * The IKEv2 downloads of an account's page. Each answers null when the panel or the account's server does not
 * offer IKEv2 (no CA, IKEv2 disabled, server without `ikev2`), and the page then shows no IKEv2 part.
 */
export interface Ikev2Downloads {
  /** The CA certificate (PEM) the client must trust, for the account's server. */
  caCertificate(accountName: string): Promise<OtlDownload | null>;
  /** The account's IKEv2 client profile. */
  profile(accountName: string): Promise<OtlDownload | null>;
}

