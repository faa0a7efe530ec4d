from .classroom import Classroom, Learner, Topic
from .generation import Generation, PageVersion, RenderCheck, Thread
from .library import TopicRequest
from .moderation import ModerationItem

__all__ = ["Classroom", "Generation", "Learner", "ModerationItem", "PageVersion", "RenderCheck", "Thread", "Topic", "TopicRequest"]
