/** What the benchmark hands the floor bot: where each fake is. */
export type FloorSettings = {
  historyFile: string;
  model: { baseUrl: string; apiKey: string; name: string };
  telegram: { token: string; apiRoot: string };
  slack: { botToken: string; appToken: string; apiUrl: string };
  discord: { token: string; apiUrl: string };
};

/** Answers one person's text in a chat (the model, with that chat's history). */
export type Answer = (chat: string, text: string) => Promise<string>;
/** Stops a platform's connection. */
export type Stop = () => Promise<void>;
/** Connects one platform; resolves once it is up. */
export type StartPlatform = (settings: FloorSettings, answer: Answer) => Promise<Stop>;
