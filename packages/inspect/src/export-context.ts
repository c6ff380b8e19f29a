/** Where an export sends, and the settings it needs that are not secrets: shared by every format. */
export interface ExportContext {
  /** The address the export sends to: the inspector's own receiving address, or the app's. */
  url: string
  /** Mode `basic`: the user name (not a secret). */
  username?: string
  /** Mode `oauth2`: the app id (not a secret). */
  appId?: string
  signatureHeader?: string
  tokenPath?: string
}
