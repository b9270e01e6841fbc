// The demo's two conversations, two turns each; every turn calls a tool, one of them fails.
export const conversations: { chatId: string; turns: string[] }[] = [
  {
    chatId: "chat-ada-1001",
    turns: ["Hi! Where is my order A-1001?", "Thanks. What is your return policy?"],
  },
  {
    chatId: "chat-ben-2002",
    turns: ["My order B-2002 arrived damaged. Please refund it.", "OK. Has order B-2002 been delivered, then?"],
  },
]
