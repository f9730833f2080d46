"""A class predicting together: a student's screen, or, with the teacher's key from the teacher's link, the
teacher's; without a code, a box to type one."""

import streamlit as st

from rnnlab.i18n import _
from ui.class_student import student_page
from ui.class_teacher import came_as_teacher, teacher_key, teacher_page
from ui.classroom import code_from_link, join_form
from ui.session import url_state, write_url

code, given = code_from_link()
if code is None and not given:
    write_url(url_state())  # the experiment stays in the URL here too, so a reload keeps it for the other pages
    st.title(_("Join a class"))
    st.caption(_("Your teacher shows a class code and a link: type the code here, or open the link."))
    join_form()
    st.stop()
key = teacher_key(code) if code is not None else None
if key is not None and code is not None:
    st.set_page_config(initial_sidebar_state="collapsed")  # the projector's whole width for the class
    teacher_page(code, key)
else:
    student_page(code or given, join=not came_as_teacher(code or given))
