/** The app the emulator's `mockService` is started with (`run.ts`), and the client's credentials for it. */
export const MOCK_APP = { appId: 'runtimes-app', appSecret: 'runtimes-secret-51c0e7' } as const
