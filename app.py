"""polarize: the Streamlit entry point (``streamlit run app.py``).

The pages live in ``pages/``; the Explorer is the default page, at the app's root URL.
"""

import streamlit as st

st.set_page_config(page_title="polarize", page_icon=":material/scatter_plot:", layout="wide",
                   initial_sidebar_state="expanded")

# Less blank space above the title, so that the dashboard fits a projector's 1080 lines.
st.html("<style>[data-testid='stMainBlockContainer'] {padding-top: 2.2rem;}</style>")

explorer = st.Page("pages/explorer.py", title="Explorer", icon=":material/animation:", default=True,
                   url_path="explorer")
comparisons = [
    st.Page("pages/normalizers.py", title="Normalizers side by side", icon=":material/view_module:",
            url_path="normalizers"),
    st.Page("pages/losses.py", title="Loss and conditioning", icon=":material/tune:", url_path="losses"),
    st.Page("pages/tied.py", title="Massive activations", icon=":material/bolt:", url_path="tied"),
    st.Page("pages/descent.py", title="Flow vs descent", icon=":material/stairs:", url_path="descent"),
    st.Page("pages/rates.py", title="Rates", icon=":material/speed:", url_path="rates"),
]
maths = st.Page("pages/maths.py", title="About the maths", icon=":material/functions:", url_path="maths")
st.navigation([explorer, *comparisons, maths]).run()
