/**
 * Prompt-injection attempts, recognised by a documented rule set (docs/decisions.md, "Security
 * views"). A rule is an id, what it catches, and a pattern; the ids are what the security views
 * count. The rules aim at the phrasings that recur in public injection corpora and jailbreak
 * prompts; they flag for review, they never block, so a rule may err towards flagging.
 */
export interface InjectionRule {
  id: string
  catches: string
  pattern: RegExp
}

export const INJECTION_RULES: readonly InjectionRule[] = [
  {
    id: 'ignore_instructions',
    catches: 'asks the model to ignore, disregard or forget the instructions it was given',
    pattern:
      /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+)*(?:previous|prior|above|earlier|preceding|original|system)\s+(?:instructions?|prompts?|directions|rules|guidelines|messages?)/gi,
  },
  {
    id: 'reveal_system_prompt',
    catches: 'asks the model to reveal, print or repeat its system prompt or hidden instructions',
    pattern:
      /\b(?:reveal|show|print|repeat|output|display|leak|tell\s+me)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|exact\s+|entire\s+)?(?:system\s+prompt|initial\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions)|original\s+instructions)/gi,
  },
  {
    id: 'role_override',
    catches: 'tries to give the model a new, unrestricted persona (DAN, developer mode, jailbroken)',
    pattern:
      /\b(?:you\s+are\s+now|act\s+as|pretend\s+to\s+be|from\s+now\s+on\s+you\s+are)\s+(?:an?\s+)?(?:DAN|unrestricted|unfiltered|jailbroken|evil)\b|\bdo\s+anything\s+now\b|\b(?:developer|god|jailbreak)\s+mode\b/gi,
  },
  {
    id: 'safety_bypass',
    catches: 'asks the model to bypass, disable or ignore its safety rules or content policy',
    pattern:
      /\b(?:bypass|disable|ignore|turn\s+off|circumvent)\s+(?:all\s+|any\s+|your\s+|the\s+)*(?:safety|content|ethical|moderation)\s+(?:filters?|guidelines|policies|policy|restrictions|rules)/gi,
  },
  {
    id: 'fake_delimiter',
    catches: 'chat-template control tokens in content, used to forge a system or assistant turn',
    pattern: /<\|(?:im_start|im_end|system|endoftext)\|>|\[\/?INST\]|<<\/?SYS>>/gi,
  },
]

/** How often each rule matched in the text; rules that did not match are absent. */
export function findInjections(text: string): Record<string, number> {
  const found: Record<string, number> = {}
  for (const rule of INJECTION_RULES) {
    const matches = text.match(rule.pattern)
    if (matches) found[rule.id] = matches.length
  }
  return found
}
