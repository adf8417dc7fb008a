import { Api, InputFile } from 'grammy';

/** grammy's own fetch (node-fetch), and a photo it fetches by URL before uploading it. */
export async function telegramProbe(origin: string): Promise<{ me: string | undefined; photo: number }> {
  const telegram = new Api('probe', { apiRoot: origin });
  const me = await telegram.getMe();
  const photo = await telegram.sendPhoto(1, new InputFile(new URL(`${origin}/cat.png`)));
  return { me: me.username, photo: photo.message_id };
}
