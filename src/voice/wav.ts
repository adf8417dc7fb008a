/** A WAV header for 16-bit PCM, and a WAV of silence (what `hob doctor` sends to prove an endpoint). */

export function wavHeader(dataBytes: number, sampleRate = 16_000, channels = 1): Buffer {
  const bytesPerSample = 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * bytesPerSample, 28);
  header.writeUInt16LE(channels * bytesPerSample, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** `seconds` of silence, 16 kHz mono: 32 KB a second. */
export function silentWav(seconds: number): Buffer {
  const dataBytes = Math.round(seconds * 16_000) * 2;
  return Buffer.concat([wavHeader(dataBytes), Buffer.alloc(dataBytes)]);
}
