// The topics of the event plane (contract §4).
export const EVENT_TOPICS = ['session', 'wallet', 'status'] as const
export type EventTopic = (typeof EVENT_TOPICS)[number]
