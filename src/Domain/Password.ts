import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto"

/** scrypt at OWASP's minimum, 2^17 × 8 × 128 bytes = 128 MiB per hash (maxmem 256 MiB allows it): memory-hard, about 0.3 s on one core. */
const defaults = { N: 2 ** 17, r: 8, p: 1 }
const keyLength = 32
const saltLength = 16

/**
 * At most two derivations at once: each holds 128 MiB and a libuv thread, so a burst of sign-ins
 * queues here instead of taking the process's memory and the threads file reads need.
 */
const maxConcurrent = 2
let running = 0
const waiting: Array<() => void> = []

const limited = async <A>(task: () => Promise<A>): Promise<A> => {
  if (running >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve))
  else running++
  try {
    return await task()
  } finally {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }
}

const derive = (password: string, salt: Buffer, options: ScryptOptions) =>
  limited(() => deriveNow(password, salt, options))

const deriveNow = (password: string, salt: Buffer, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize("NFC"),
      salt,
      keyLength,
      { ...options, maxmem: 256 * 1024 * 1024 },
      (error, key) => (error === null ? resolve(key) : reject(error))
    )
  )

/** `scrypt$N$r$p$salt$hash` (base64url), so the cost can rise later without breaking stored hashes. */
export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(saltLength)
  const hash = await derive(password, salt, defaults)
  return [
    "scrypt",
    defaults.N,
    defaults.r,
    defaults.p,
    salt.toString("base64url"),
    hash.toString("base64url")
  ].join("$")
}

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, "base64url")
  const actual = await derive(password, Buffer.from(salt, "base64url"), {
    N: Number(n),
    r: Number(r),
    p: Number(p)
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** True for a hash made with other parameters than today's (e.g. N=2^15 before issue 26): re-hash it at the next sign-in. */
export const needsRehash = (stored: string) => {
  const [scheme, n, r, p] = stored.split("$")
  return (
    scheme !== "scrypt" || Number(n) !== defaults.N || Number(r) !== defaults.r || Number(p) !== defaults.p
  )
}

/** A hash of nothing anyone knows: checked against when the e-mail is unknown, so both answers take as long. */
let decoy: Promise<string> | undefined
export const decoyHash = () => {
  decoy ??= hashPassword(randomBytes(24).toString("base64url"))
  return decoy
}

/** 24 characters from 144 random bits. */
export const generatePassword = () => randomBytes(18).toString("base64url")

/** 256 random bits for a session token; only its SHA-256 is stored. */
export const generateToken = () => randomBytes(32).toString("base64url")
