// Polls a job until it ends (completed or failed): `get` reads the job object.
export async function waitForJob<J extends { status: string }>(get: () => Promise<J>, what: string): Promise<J> {
  for (let i = 0; i < 1200; i++) {
    const j = await get();
    if (j.status === 'completed' || j.status === 'failed') return j;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} did not finish`);
}
