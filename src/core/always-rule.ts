/**
 * A person's standing approval, from an "allow always" button. It lives in core because three
 * layers share it: policy matches calls against it, the store keeps it, the engine adds one
 * when the person presses the button. Narrow by design: with `command` it covers exactly that
 * command string; with `pathPrefix` only paths under that directory; with neither, every call
 * of the tool (for tools that touch no path or command).
 */
export type AlwaysRule = { toolName: string; command?: string; pathPrefix?: string };
