from .classroom import Classroom, Learner, Topic
from .generation import Generation, PageVersion, RenderCheck, Thread
from .learned_route import LearnedRoute
from .library import LibraryPage
from .moderation import ModerationItem
from .topic_request import TopicRequest

__all__ = ["Classroom", "Generation", "LearnedRoute", "Learner", "LibraryPage", "ModerationItem", "PageVersion",
           "RenderCheck", "Thread", "Topic", "TopicRequest"]
