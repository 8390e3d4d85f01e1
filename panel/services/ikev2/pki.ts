// IKEv2 PKI on node-forge: CA import (pair check) and generation, server certificate with SANs and IKE-friendly EKUs.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { ApiError, E } from '../../http/errors.ts';

/** EKU "IP security IKE intermediate" (RFC 4945 §5.1.3.12); macOS/iOS look for it next to serverAuth. */
const EKU_IKE_INTERMEDIATE = '1.3.6.1.5.5.8.2.2';
/** RSA modulus of generated keys. */
const RSA_BITS = 2048;
const DAY_MS = 86_400_000;
/** Validity of a generated CA (10 years) and server certificate (825 days, the longest Apple accepts for TLS too). */
const CA_DAYS = 3650;
const SERVER_DAYS = 825;

/** Subject fields (spec names without the `ca_`/`server_` prefix); empty strings are left out of the DN. */
export interface SubjectFields {
  common_name: string;
  country_name?: string;
  locality?: string;
  organization: string;
  organizational_unit?: string;
  state_or_province_name?: string;
}

/** A certificate and its private key, both PEM. */
export interface CertPair {
  cert: string;
  key: string;
}

const ATTRS: Array<[keyof SubjectFields, string]> = [
  ['country_name', 'C'], ['state_or_province_name', 'ST'], ['locality', 'L'], ['organization', 'O'],
  ['organizational_unit', 'OU'], ['common_name', 'CN'],
];

function subjectAttrs(fields: SubjectFields): forge.pki.CertificateField[] {
  const out: forge.pki.CertificateField[] = [];
  for (const [key, shortName] of ATTRS) {
    const value = fields[key];
    if (value) out.push({ shortName, value: forge.util.encodeUtf8(value), valueTagClass: forge.asn1.Type.UTF8 as unknown as forge.asn1.Class });
  }
  return out;
}

/** The subject fields a certificate names (`''` for absent ones). */
export function subjectOf(cert: forge.pki.Certificate): Required<SubjectFields> {
  const get = (shortName: string) => {
    const v = cert.subject.getField(shortName)?.value;
    return typeof v === 'string' ? safeDecode(v) : '';
  };
  return {
    common_name: get('CN'), country_name: get('C'), locality: get('L'), organization: get('O'),
    organizational_unit: get('OU'), state_or_province_name: get('ST'),
  };
}

function safeDecode(v: string): string {
  try {
    return forge.util.decodeUtf8(v);
  } catch {
    return v;
  }
}

function newRsaKeys(): forge.pki.rsa.KeyPair {
  // node's native generator (forge's pure-JS one takes seconds); converted to forge objects through PEM
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: RSA_BITS, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const priv = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: priv, publicKey: forge.pki.rsa.setPublicKey(priv.n, priv.e) };
}

/** A positive 16-byte serial in hex. */
function serial(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f;
  if (b[0] === 0) b[0] = 1;
  return b.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, days: number): void {
  // one hour back: clients whose clocks lag a little still accept a fresh certificate
  cert.validity.notBefore = new Date(now.getTime() - 3_600_000);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
}

/** Generates a self-signed RSA CA (basicConstraints CA, keyCertSign + cRLSign) from the subject fields. */
export function generateCa(fields: SubjectFields, now: Date): CertPair {
  const keys = newRsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  validity(cert, now, CA_DAYS);
  const dn = subjectAttrs(fields);
  cert.setSubject(dn);
  cert.setIssuer(dn);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

/**
 * Checks an imported CA pair: the certificate must parse as an RSA X.509 certificate (else `Certificate not found`)
 * and the key must be an RSA private key matching its public key (else `Certificate failed`). Returns the PEMs
 * normalised and the certificate's subject fields.
 */
export function checkCaPair(certPem: string, keyPem: string): CertPair & { subject: Required<SubjectFields> } {
  let cert: forge.pki.Certificate;
  try {
    cert = forge.pki.certificateFromPem(certPem);
  } catch {
    throw new ApiError(E.CERTIFICATE_NOT_FOUND);
  }
  let key: forge.pki.rsa.PrivateKey;
  try {
    key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  } catch {
    throw new ApiError(E.CERTIFICATE_FAILED);
  }
  const pub = cert.publicKey as forge.pki.rsa.PublicKey;
  if (!pub?.n || !key?.n || pub.n.compareTo(key.n) !== 0 || pub.e.compareTo(key.e) !== 0) {
    throw new ApiError(E.CERTIFICATE_FAILED);
  }
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(key), subject: subjectOf(cert) };
}

/** What goes into the server certificate. */
export interface ServerCertInput extends SubjectFields {
  domain: string;
  ip: string;
  ipv6?: string;
}

/**
 * Issues the server certificate under the CA: subjectAltName DNS `domain`, IP `ip` (and `ipv6`), EKU serverAuth +
 * IKE intermediate, keyUsage digitalSignature + keyEncipherment, authorityKeyIdentifier of the CA.
 * Windows matches the server name against a SAN, Apple wants both EKUs, Android/strongSwan accept either.
 */
export function issueServerCert(ca: CertPair, input: ServerCertInput, now: Date): CertPair {
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const caKey = forge.pki.privateKeyFromPem(ca.key);
  const keys = newRsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  validity(cert, now, SERVER_DAYS);
  cert.setSubject(subjectAttrs(input));
  cert.setIssuer(caCert.subject.attributes);
  const altNames: Array<{ type: number; value?: string; ip?: string }> = [{ type: 2, value: input.domain }, { type: 7, ip: input.ip }];
  if (input.ipv6) altNames.push({ type: 7, ip: input.ipv6 });
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, [EKU_IKE_INTERMEDIATE]: true },
    { name: 'subjectAltName', altNames },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** The DER bytes of a PEM certificate as base64 (the `.sswan` profile's `remote.cert`). */
export function pemToDerBase64(pem: string): string {
  const cert = forge.pki.certificateFromPem(pem);
  return forge.util.encode64(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes());
}
