/**
 * A chat channel's own commands (its module's `chatCommands`, such as a sign-in link) as the
 * gateway answers them on any platform: in the menus (owner-only ones in the owners' menu
 * only), refused to others in hob's usual words, kept to direct chats when they answer with
 * a secret, and run once per update.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelChatCommand } from '../../src/gateway/channel-module.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

function linkCommand(calls: { args: string; platform: string; userId: string; chatType: string }[]): ChannelChatCommand {
  return {
    command: 'signin',
    description: 'A sign-in link',
    ownerOnly: true,
    directOnly: true,
    run: async (args, context) => {
      calls.push({ args, ...context });
      return `https://hob.example/sign-in#${calls.length}`;
    },
  };
}

describe("a channel's chat commands", () => {
  it("are in the owners' menu only when owner-only, and answer the owner in a DM", async () => {
    const calls: { args: string; platform: string; userId: string; chatType: string }[] = [];
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]), { channelCommands: [linkCommand(calls)] });
    expect(channel.menus?.everyone.map((entry) => entry.command)).not.toContain('signin');
    expect(channel.menus?.owners?.commands).toContainEqual({ command: 'signin', description: 'A sign-in link' });
    channel.say(OWNER, '/signin for-me');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text === 'https://hob.example/sign-in#1'), 5000, 'the link');
    expect(calls).toEqual([{ args: 'for-me', platform: 'memory', userId: OWNER.id, chatType: 'dm' }]);
  });

  it('refuses someone who is not the owner, and a group chat, without running the command', async () => {
    const calls: { args: string; platform: string; userId: string; chatType: string }[] = [];
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]), {
      channelCommands: [linkCommand(calls)],
      access: new Map([['memory', { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: ['group-1'] }]]),
    });
    channel.say(FRIEND, '/signin');
    await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).find((m) => m.text === '/signin is only for the owner of this hob.'), 5000, 'the refusal');
    channel.say(OWNER, '/signin', { chatId: 'group-1', chatType: 'group', mention: true });
    await channel.waitFor(() => channel.chat('group-1').find((m) => m.text === '/signin answers only in a private chat: send it to me there.'), 5000, 'the group refusal');
    expect(calls).toEqual([]);
  });
});
