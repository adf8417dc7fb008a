/**
 * How a channel delivers spoken audio: as a voice message (Ogg/Opus, shown as a playable
 * voice bubble) or as an audio file beside the text. Each channel declares one in its
 * capabilities (the port); the voice service makes audio in the format it needs.
 */
export type SpokenDelivery = 'voice_message' | 'audio_file';
