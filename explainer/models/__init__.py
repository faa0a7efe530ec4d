from .classroom import Classroom, Learner, Topic
from .generation import Generation, PageVersion, RenderCheck, Thread

__all__ = ["Classroom", "Generation", "Learner", "PageVersion", "RenderCheck", "Thread", "Topic"]
