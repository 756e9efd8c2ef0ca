/** The origin (and so the organization) that a valid API key identifies. */
export interface CallerShape {
  readonly keyId: string
  readonly prefix: string
  readonly originId: string
  readonly originLabel: string
  readonly organizationId: string
  readonly country: string
  readonly rateLimit: number
  /** False for a test key (`lk_test_…`): what it writes is test data (docs/contract.md#10-test-mode). */
  readonly livemode: boolean
}
