"""Messages, rows and conversations: the chat data every command reads and writes.

`types` (requests, replies, messages), `fields` (a row's columns), `messages` (one message
read into OpenAI's chat format), `row_messages` (a row's messages), `render` (a
conversation as the judge and the simulated user read it), and the tool-call data beneath
them in `toolcalls`.
"""
