"""A deterministic 5,000-character mixed input for the long-text golden test."""

from __future__ import annotations

LONG_TEXT_CHARS = 5000

_PARAGRAPH = (
    "2026年9月26日，我们在北京召开了第3届开发者大会，来了1200多人。\n"
    "会议从上午9:30开始，到下午5:00结束；中间休息了45分钟。"
    "大家讨论了GitHub上的开源项目，还有人现场演示了用Python写的语音合成程序！"
    "这个程序的延迟只有120毫秒，比去年快了35%，内存占用降到了256MB。"
    "主持人说：“今年的成绩来之不易，明年我们要做得更好。”"
    "会后，很多人在银行门口排队取钱，因为附近的餐厅只收现金……"
    "小孩儿们在广场上玩儿，老人们在树下下棋，一切都显得那么平静而美好"
    "没有标点的这一句话故意写得很长很长以便测试在没有任何逗号或者句号的情况下"
    "分段程序是否能够在合适的位置进行硬切分而不会丢失任何一个字符也不会死循环"
    "Hello everyone, welcome to the conference. 电话：13812345678。\n\n"
)


def long_text() -> str:
    repeats = LONG_TEXT_CHARS // len(_PARAGRAPH) + 1
    return (_PARAGRAPH * repeats)[:LONG_TEXT_CHARS]
