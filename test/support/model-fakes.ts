import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { startFakeGemini, type FakeGemini } from './fake-gemini';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai';

/** The loopback fakes of the three vendors' model APIs the coding CLIs call, started together. */
export interface ModelFakes {
  anthropic: FakeAnthropic;
  openai: FakeOpenAi;
  gemini: FakeGemini;
  close(): Promise<void>;
}

/** Each fake answers every call with `text` and the given usage (OpenAI's input includes its cached part). */
export async function startModelFakes(usage: { input: number; cached?: number; output: number }, text = 'hello'): Promise<ModelFakes> {
  const [anthropic, openai, gemini] = await Promise.all([
    startFakeAnthropic(() => ({ text, usage: { input: usage.input, output: usage.output } })),
    startFakeOpenAi(() => ({ text, usage: { input: usage.input, cached: usage.cached ?? 0, output: usage.output } })),
    startFakeGemini(() => ({ text, usage: { prompt: usage.input, output: usage.output } })),
  ]);
  return {
    anthropic,
    openai,
    gemini,
    close: async () => {
      await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
    },
  };
}
