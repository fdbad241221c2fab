"""A request's text on its way into the talker.

pieces      text cut into pieces the graphs hold, at sentence ends first
prompt      upstream generate's prompt rows (role, codec prefix, speaker, text)
projection  the text_proj graph, R rows at a time
"""
