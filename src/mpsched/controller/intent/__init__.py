"""The operator's intent and who applies it: the intent kept and saved (`intent`, `state`,
`intent_file`), the operator's changes (`operator`) and the primary/backup role
(`mastership`)."""
