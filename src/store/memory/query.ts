/**
 * Plain words → an FTS5 query. A question like "when do I play padel this week" must find
 * "Padel with Jonas every Thursday at 19:00": keep the meaningful words (stop words dropped in
 * the languages people write in), let the `porter unicode61` tokenizer stem them, add a
 * prefix match for longer words, and OR them so any shared word counts (bm25 ranks).
 */

const STOP_WORDS = new Set(
  [
    // English
    'a about above after again all am an and any are as at be because been before being below between both but by can could did do does doing done down during each few for from further had has have having he her here hers him his how i if in into is it its itself just know like me more most my myself no nor not now of off on once only or other our ours out over own please remember same she should so some such tell than that the their theirs them then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself',
    'did does doing get got give go going any anything something thing things want wanted need use used say said think let lets ok okay yes also me mine us',
    // German
    'aber alle allem allen aller alles als also am an ander andere auch auf aus bei bin bis bist da damit dann das dass dein deine dem den der des dich die dir doch dort du durch ein eine einem einen einer eines er es etwas euch euer für hab habe haben hat hatte ich ihm ihn ihr im in ist ja jede jeder jetzt kann kein keine mich mein meine meinem meinen meiner mit muss nach nicht nichts noch nun nur ob oder ohne sehr sein seine sich sie sind so soll über um und uns unser unter viel vom von vor war waren was weil welche wenn wer wie wieder will wir wird wo zu zum zur wann woher wohin warum',
    // Italian
    'a ad al alla alle allo agli ai anche che chi ci come con cosa da dal dalla dei del della delle dello di dove e è gli ha hai ho i il in io la le lei li lo lui ma mi mia mie miei mio ne negli nei nel nella no noi non o per perché più quale quando quanto quella quelle quello questa queste questo se si sia sono su sua sue suo suoi sul sulla te ti tra tu tua tue tuo tuoi un una uno vi voi',
    // French
    'au aux avec ce ces cet cette dans de des du elle elles en est et être eu il ils je la le les leur leurs lui ma mais me même mes moi mon ne nos notre nous on ont ou où par pas pour qu que quel quelle quelles quels qui quoi sa sans se ses son sont sur ta te tes toi ton tu un une vos votre vous y comment quand est-ce',
    // Spanish
    'al algo como con cual cuando de del donde el ella ellas ellos en es esa ese eso esta este esto estos fue ha hay la las le les lo los mas me mi mis muy no nos o para pero por que quien se si sin sobre son su sus te tiene tu tus un una unas uno unos y ya yo qué cuándo dónde cómo',
  ]
    .join(' ')
    .split(/\s+/),
);

/** More terms than this only slow the query down; the first ones are kept. */
export const MAX_TERMS = 16;
/** Shorter words match too much as a prefix ("go*"); they match as whole words only. */
export const MIN_PREFIX_LENGTH = 4;

/** The meaningful words of a text, lower-cased, in order, without repeats. */
export function meaningfulWords(text: string): string[] {
  const words = text.toLowerCase().normalize('NFC').match(/[\p{L}\p{N}]+/gu) ?? [];
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const word of words) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue;
    if (word.length < 2 && !/\p{N}/u.test(word)) continue;
    seen.add(word);
    kept.push(word);
  }
  return kept;
}

/**
 * The FTS5 MATCH expression for a question, or undefined when no word in it is meaningful.
 * `isWholeWord` says whether the index holds the word as it is: then it is matched as a word
 * (stemmed), and only a word the index does not hold becomes a prefix ("Jon" → "Jonas"),
 * which keeps the number of rows to rank down.
 */
export function buildFtsQuery(text: string, isWholeWord: (word: string) => boolean = () => false): string | undefined {
  const terms = meaningfulWords(text)
    .slice(0, MAX_TERMS)
    // Quoted, so FTS5 operators and column names in the text are just words.
    .map((word) => (word.length >= MIN_PREFIX_LENGTH && !isWholeWord(word) ? `"${word}"*` : `"${word}"`));
  return terms.length ? terms.join(' OR ') : undefined;
}
