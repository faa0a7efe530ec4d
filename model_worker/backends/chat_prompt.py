"""Kit-grounded chat prompts for capable models (the `transformers` and `openai` backends).

The system message teaches the kit (`static/kit/REFERENCE.md`) and the rules of a page; the library
page the router chose (`PageRequest.topic`) follows as a worked example, one question and its page;
then the learner's question in the asked language (after a teacher's note, if the topic has one). The
system message is the same bytes for every request in one language, so a server's prefix cache (vLLM's,
SGLang's) keeps it from one page to the next; whatever varies comes after it. A follow-up sends the current page and asks for the
revised whole page; a repair sends the failing page with what the render check found.
"""

from __future__ import annotations

from functools import cache

from model_worker.backends.kit_reference import reference_text
from model_worker.contract.pages import PageRequest

LANGUAGE = {
    "en": "Write every word the learner reads in English; use <html lang=\"en\">.",
    "zh": "Write every word the learner reads in Simplified Chinese; use <html lang=\"zh-CN\"> and lang: \"zh\" "
          "in start().",
}
SYSTEM = """You write one interactive 3D science page for a curious learner, as a single html file
that uses the page kit below (three.js underneath). Answer with the complete html document only, from
<!doctype html> to </html>, in one ```html code block. No explanations.

{reference}

{language}"""


@cache
def _library() -> dict:
    from model_worker.corpus import load_pages

    return {page.slug: page for page in load_pages()}


def example_pages(request: PageRequest, limit: int = 1) -> list:
    """The library page(s) to show as worked examples: the router's choice, when it names one."""
    if not request.topic:
        return []
    page = _library().get(request.topic)
    return [page][:limit] if page else []


def system_message(lang: str) -> str:
    return SYSTEM.format(reference=reference_text().strip(), language=LANGUAGE[lang])


def build_messages(request: PageRequest, *, examples: bool = True) -> list[dict]:
    """Chat messages for one request. `examples=False` leaves the worked example out (a short context)."""
    messages = [{"role": "system", "content": system_message(request.lang)}]
    if examples:
        for page in example_pages(request):
            lang, question = page.questions[0]
            messages.append({"role": "user", "content": question})
            messages.append({"role": "assistant", "content": f"```html\n{page.html.strip()}\n```"})
    ask = _ask(request)
    if request.topic_note and request.topic_note.strip():  # after the shared prefix, not in the system message
        ask = f"The teacher's note for this topic: {' '.join(request.topic_note.split())}\n\n{ask}"
    messages.append({"role": "user", "content": ask})
    return messages


def _ask(request: PageRequest) -> str:
    question = " ".join(request.question.split())
    if request.repair is not None:
        errors = "\n".join(f"- {e}" for e in request.repair.errors)
        return (f"The page below was written for the question \"{question}\", but it fails the check in a "
                f"browser:\n{errors}\n\nFix these problems and answer with the whole corrected page.\n\n"
                f"```html\n{request.repair.page.strip()}\n```")
    if request.previous_page:
        return (f"Here is the current page:\n\n```html\n{request.previous_page.strip()}\n```\n\n"
                f"Revise it: {question}\nAnswer with the whole revised page, not a diff.")
    return question
