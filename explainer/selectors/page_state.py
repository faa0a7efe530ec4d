"""The version a follow-up is asked on, in the state that answers it, when the page itself answers it."""

from __future__ import annotations

from dataclasses import dataclass

from explainer.library.page_state import PageState
from explainer.library.state_match import StateMatch, state_match
from explainer.models import PageVersion, Thread
from explainer.selectors.generation import thread_current_page
from explainer.selectors.library import library_page_html


@dataclass(frozen=True)
class OnPage:
    page: PageVersion  # the version the learner reads (what a follow-up would revise)
    match: StateMatch
    hidden: bool = False  # a teacher hid a version of the thread that is this very page (another state of it)

    @property
    def fragment(self) -> str:
        return self.match.state.fragment()


def follow_up_on_page(*, thread: Thread, question: str, lang: str) -> OnPage | None:
    """The thread's current page in the state that answers the follow-up; None when the page cannot answer it,
    is in the other language, or is in that state already."""
    page = thread_current_page(thread=thread)
    if page is None:
        return None
    current = PageState.from_fragment(page.state)
    library = bool(thread.topic_slug) and page.html == library_page_html(slug=thread.topic_slug,
                                                                         classroom=thread.classroom)
    match = state_match(question=question, html=page.html, current=current, lang=lang, library=library)
    if match is None or match.state == current:
        return None
    return OnPage(page=page, match=match, hidden=thread.pages.filter(hidden=True, html=page.html).exists())
